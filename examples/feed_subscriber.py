"""An extension indexes a store through a subscription over a socket, resuming from its cursor."""

from waybook import Session
from waybook.model import plain_text
from waybook.stores import Applied, FeedServer, RemoteSubscription, open_store

with open_store("memory:") as store, FeedServer(store) as server:
    session = Session(store.create("chat"))
    session.user("Where is the release checklist?")
    session.assistant("In docs/release.md.")

    index: dict[str, list[str]] = {}
    applied = Applied()
    cursor = 0
    for run in range(2):  # two runs of the indexer; the second resumes from the first's cursor
        with RemoteSubscription(server.address, after=cursor, journals=["chat"]) as subscription:
            while (delivery := subscription.next(timeout=1)) is not None:
                if applied.first_time(delivery):
                    words = plain_text(getattr(delivery.record.body, "content", ())).split()
                    index.setdefault(delivery.journal_id, []).extend(words)
                subscription.ack(delivery.position)
            cursor = subscription.cursor
        print(f"run {run + 1}: cursor {cursor}, {len(applied)} records indexed")
        session.user("Thanks!")
    print("words:", len(index["chat"]))
