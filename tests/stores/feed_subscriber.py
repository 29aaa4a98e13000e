"""A subscriber in its own process: reads deliveries from a FeedServer and keeps its cursor in a file.

    python -m tests.stores.feed_subscriber HOST PORT CURSOR_FILE COUNT

Takes COUNT deliveries after the cursor in CURSOR_FILE (0 if absent), prints each as a JSON line
(journal, seq, digest, position), acknowledges it and saves the cursor, then exits.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from waybook.stores import RemoteSubscription


def main() -> None:
    host, port, cursor_file, count = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
    after = int(cursor_file.read_text()) if cursor_file.exists() else 0
    with RemoteSubscription((host, port), after, journals=["s1", "s2"]) as subscription:
        for _ in range(count):
            delivery = subscription.next(timeout=30)
            assert delivery is not None, "no delivery within 30 s"
            journal, seq, digest = delivery.key
            print(
                json.dumps({"journal": journal, "seq": seq, "digest": digest, "position": delivery.position})
            )
            sys.stdout.flush()
            subscription.ack(delivery.position)
            cursor_file.write_text(str(subscription.cursor))


if __name__ == "__main__":
    main()
