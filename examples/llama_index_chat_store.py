"""LlamaIndex on a waybook store: a chat memory with a scripted LLM (no network, no API key).

The chat survives a restart, deleting a message moves the leaf back instead of erasing it (the journal
still holds it, on its own branch), and a set from a stale read is refused.
Run: python examples/llama_index_chat_store.py
"""

import tempfile

from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.memory import ChatMemoryBuffer

from waybook import verify
from waybook.integrations.errors import StaleHistoryError
from waybook.integrations.llama_index import WaybookChatStore
from waybook.stores import open_store


def chat(memory: ChatMemoryBuffer, llm: MockLLM, text: str) -> str:
    """One turn: the user's message and the model's reply both go into the memory (the store)."""
    memory.put(ChatMessage(role="user", content=text))
    reply = llm.chat(memory.get()).message
    memory.put(reply)
    return str(reply.content)


def main() -> None:
    url = f"file:{tempfile.mkdtemp(prefix='waybook-llama-index-')}"
    llm = MockLLM(max_tokens=3)  # replies with the first words of the prompt: scripted, offline
    memory = ChatMemoryBuffer.from_defaults(
        chat_store=WaybookChatStore(open_store(url)), chat_store_key="ada"
    )
    chat(memory, llm, "I like tea")
    chat(memory, llm, "my card is 4111")

    chats = WaybookChatStore(open_store(url))  # a new process on the same store
    print("after restart:", len(chats.get_messages("ada")), "messages")
    removed = chats.delete_message("ada", 2)
    print("deleted:", removed.content if removed else None, "->", len(chats.get_messages("ada")), "messages")

    seen = chats.get_messages("ada")
    WaybookChatStore(open_store(url)).add_message("ada", ChatMessage(role="user", content="and coffee"))
    try:
        chats.set_messages("ada", seen[:1])
    except StaleHistoryError:
        print("stale writer refused")

    store = open_store(url)
    journal_id = chats.journal_id("ada")
    with store.open(journal_id) as journal:
        held = any("4111" in str(record.body) for record in journal.read())
        print("the journal still holds the deleted message:", held)
        print("chain ok", verify(journal).ok)


if __name__ == "__main__":
    main()
