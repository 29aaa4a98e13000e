"""A hypothesis state machine drives the Memory port and a dict-of-files model side by side.

The model is deliberately naive: a dict of path -> text and a write counter for eviction order. After
every step the port's files equal the model's, and replaying the journal from scratch rebuilds exactly
the same files.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_paths import ancestors
from waybook.journal._roles.memory_text import with_description
from waybook.memory import Limits, Memory, MemoryProjection
from waybook.projections import replay

LIMITS = Limits(max_file_bytes=16, max_total_bytes=30, max_files=3)
PATHS = ["/memories/a.md", "/memories/b.md", "/memories/d/c.md", "/memories/d/e.txt", "/memories/f.md"]
texts = st.text(alphabet="ab\n£", max_size=12)


class MemoryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.journal = InMemoryJournal()
        self.memory = Memory(self.journal, scope="sm", limits=LIMITS)
        self.files: dict[str, str] = {}
        self.dirs: set[str] = set()
        """Directories outlive their files: made by writes and moves, gone when deleted themselves."""
        self.written: dict[str, int] = {}
        self.clock = 0

    # --- the model ---------------------------------------------------------------------------------

    def model_write(self, path: str, text: str) -> bool:
        size = len(text.encode())
        if size > LIMITS.max_file_bytes:
            return False
        others = sorted((p for p in self.files if p != path), key=lambda p: self.written[p])
        total = sum(len(self.files[p].encode()) for p in others) + size
        count = len(others) + 1
        evict = []
        for victim in others:
            if total <= LIMITS.max_total_bytes and count <= LIMITS.max_files:
                break
            evict.append(victim)
            total -= len(self.files[victim].encode())
            count -= 1
        if total > LIMITS.max_total_bytes or count > LIMITS.max_files:
            return False
        for victim in evict:
            del self.files[victim]
            del self.written[victim]
        self.clock += 1
        self.files[path] = text
        self.written[path] = self.clock
        self.dirs.update(ancestors(path))
        return True

    def model_change(self, writes: dict[str, str], deletes: set[str]) -> bool:
        """A patch: deletes, then writes in order, evicting the earliest-written untouched files."""
        if any(len(t.encode()) > LIMITS.max_file_bytes for t in writes.values()):
            return False
        staying = sorted(
            (p for p in self.files if p not in deletes and p not in writes), key=lambda p: self.written[p]
        )
        total = sum(len(self.files[p].encode()) for p in staying) + sum(
            len(t.encode()) for t in writes.values()
        )
        count = len(staying) + len(writes)
        evict = []
        for victim in staying:
            if total <= LIMITS.max_total_bytes and count <= LIMITS.max_files:
                break
            evict.append(victim)
            total -= len(self.files[victim].encode())
            count -= 1
        if total > LIMITS.max_total_bytes or count > LIMITS.max_files:
            return False
        for gone in [*deletes, *evict]:
            del self.files[gone]
            del self.written[gone]

        def growth(path: str) -> int:
            return len(writes[path].encode()) - len(self.files.get(path, "").encode())

        ordered = [p for p in writes if growth(p) <= 0] + [p for p in writes if growth(p) > 0]
        for path in ordered:
            text = writes[path]
            if self.files.get(path) == text:
                continue  # an unchanged file is not written again
            self.clock += 1
            self.files[path] = text
            self.dirs.update(ancestors(path))
            self.written[path] = self.clock
        return True

    # --- rules -------------------------------------------------------------------------------------

    @rule(path=st.sampled_from(PATHS), text=texts)
    def create(self, path: str, text: str) -> None:
        result = self.memory.execute({"command": "create", "path": path, "text": text})
        assert result.ok == self.model_write(path, text), result.error

    @precondition(lambda self: self.files)
    @rule(data=st.data(), new=texts)
    def str_replace(self, data: st.DataObject, new: str) -> None:
        path = data.draw(st.sampled_from(sorted(self.files)))
        text = self.files[path]
        old = data.draw(st.text(alphabet="ab\n£", min_size=1, max_size=3))
        result = self.memory.execute(
            {"command": "str_replace", "path": path, "old_text": old, "new_text": new}
        )
        if text.count(old) != 1:
            assert result.error is not None
            assert result.error.code == ("MATCH_NOT_FOUND" if old not in text else "MATCH_NOT_UNIQUE")
            return
        assert result.ok == self.model_write(path, text.replace(old, new, 1)), result.error

    @precondition(lambda self: self.files)
    @rule(data=st.data(), text=texts)
    def insert(self, data: st.DataObject, text: str) -> None:
        path = data.draw(st.sampled_from(sorted(self.files)))
        lines = self.files[path].replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if lines[-1] == "":
            lines.pop()
        slot = data.draw(st.integers(0, len(lines) + 1))
        result = self.memory.execute({"command": "insert", "path": path, "insert_line": slot, "text": text})
        if slot > len(lines):
            assert result.error is not None
            assert result.error.code == "INVALID_RANGE"
            return
        added = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if added[-1] == "" and len(added) > 1:
            added.pop()
        new = "\n".join(lines[:slot] + added + lines[slot:]) + "\n"
        assert result.ok == self.model_write(path, new), result.error

    @rule(path=st.sampled_from([*PATHS, "/memories/d"]))
    def delete(self, path: str) -> None:
        doomed = [p for p in self.files if p == path or p.startswith(path + "/")]
        result = self.memory.execute({"command": "delete", "path": path})
        assert result.ok == bool(doomed or path in self.dirs)
        for p in doomed:
            del self.files[p]
            del self.written[p]
        self.dirs -= {d for d in self.dirs if d == path or d.startswith(path + "/")}

    @rule(old=st.sampled_from(PATHS), new=st.sampled_from(PATHS))
    def rename(self, old: str, new: str) -> None:
        result = self.memory.execute({"command": "rename", "old_path": old, "new_path": new})
        if old in self.files and new not in self.files and old != new:
            assert result.ok, result.error
            self.files[new] = self.files.pop(old)
            self.written[new] = self.written.pop(old)
            self.dirs.update(ancestors(new))
        else:
            assert not result.ok

    @rule(data=st.data(), added=st.lists(st.text(alphabet="ab£", max_size=4), min_size=1, max_size=3))
    def apply_patch(self, data: st.DataObject, added: list[str]) -> None:
        """Add one file, update a line of another and delete a third, all or nothing."""
        new_path = data.draw(st.sampled_from(PATHS))
        ops = [f"*** Add File: {new_path}", *(f"+{line}" for line in added)]
        writes = {new_path: "".join(f"{line}\n" for line in added)}
        deletes: set[str] = set()
        others = sorted(p for p in self.files if p != new_path)
        if others:
            target = data.draw(st.sampled_from(others))
            lines = self.files[target].split("\n")
            if lines[-1] == "":
                lines.pop()
            if lines and data.draw(st.booleans()):
                old = data.draw(st.sampled_from(lines))
                new = data.draw(st.text(alphabet="ab£", max_size=4))
                first = lines.index(old)
                ops += [f"*** Update File: {target}", "@@", f"-{old}", f"+{new}"]
                writes[target] = "".join(f"{x}\n" for x in [*lines[:first], new, *lines[first + 1 :]])
            else:
                ops.append(f"*** Delete File: {target}")
                deletes.add(target)
        patch = "\n".join(["*** Begin Patch", *ops, "*** End Patch"])
        before = dict(self.files)
        result = self.memory.execute({"command": "apply_patch", "patch": patch})
        if new_path in self.files:
            assert result.error is not None
            assert result.error.code == "ALREADY_EXISTS"
            return
        assert result.ok == self.model_change(writes, deletes), result.error
        if not result.ok:
            assert self.files == before

    @precondition(lambda self: self.files)
    @rule(data=st.data(), description=st.text(alphabet="ab £", min_size=1, max_size=6))
    def update_description(self, data: st.DataObject, description: str) -> None:
        path = data.draw(st.sampled_from(sorted(self.files)))
        result = self.memory.execute(
            {"command": "update_description", "path": path, "description": description}
        )
        if not description.strip():
            assert result.error is not None
            assert result.error.code == "INVALID_ARGUMENT"
            return
        assert result.ok == self.model_change(
            {path: with_description(self.files[path], description.strip())}, set()
        )

    @rule(path=st.sampled_from(PATHS))
    def view_changes_nothing(self, path: str) -> None:
        result = self.memory.execute({"command": "view", "path": path})
        assert result.ok == (path in self.files)
        if result.ok:
            assert result.value.text == self.files[path]  # type: ignore[union-attr]

    @invariant()
    def the_port_matches_the_model_and_replay_rebuilds_it(self) -> None:
        state = self.memory.state()
        state.check_invariants()
        live = {p: f.text for p, f in state.files.items()}
        assert live == self.files
        rebuilt = replay(MemoryProjection(), self.journal)
        assert {p: f.text for p, f in rebuilt.files.items()} == self.files
        assert state.kept == rebuilt.kept == self.dirs
        self.journal.check_invariants()


MemoryMachine.TestCase.settings = settings(max_examples=80, stateful_step_count=30, deadline=None)
TestMemoryMachine = MemoryMachine.TestCase
