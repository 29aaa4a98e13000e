"""Fork a stored session at a past message into a new journal that proves where it came from."""

from waybook import Session
from waybook.journal import check_fork
from waybook.stores import open_store

with open_store("memory:") as store:
    session = Session.create(store.create("chat", header=False), journal_id="chat")
    question = session.user("Suggest a name for the project.")
    session.assistant("Ledgerly.")
    session.user("Shorter, please.")
    session.assistant("Ledg.")

    retry = session.fork(question.id, store.create("chat-retry", header=False), journal_id="chat-retry")
    retry.assistant("Waybook.")
    point = check_fork(store.open("chat-retry").read(), store.open("chat").read())
    print(f"forked {point.journal} at seq {point.seq} ({point.digest[:12]})")
    print("source records:", session.head.seq, "fork records:", retry.head.seq)
