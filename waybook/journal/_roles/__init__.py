"""The rules each journal role enforces on every append and replay: sessions, memory, pins, reflection."""
