"""Issue 40, point 1: writers of one memory journal against a model (a dict of notes).

Three writers share the journal: the Memory port (compare-and-supersede, exclusive creates), a
reflection run (a checked branch merged back), and a sync-style importer (whole-file changes with the
digests it checked). Each writer reads (`snapshot`), then writes what it decided from that snapshot;
another writer's write may land in between, and a write of another note may land inside the very
append (injected at the journal's append by the journal double). The model says what must happen:
a write whose checked digest no longer holds is a CONFLICT and changes nothing; otherwise it goes
through, rebased over other notes. After every step the journal's notes equal the model's.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.helpers.memory_races import Interleaved, raw_write
from waybook import Session
from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.memory import Memory
from waybook.memory.tools import ReflectionBranch
from waybook.memory.tools.reflection import ReflectionScheduler

NOTES = ("/memories/a.md", "/memories/b.md", "/memories/c.md")
WRITERS = ("port", "reflection", "sync")
texts = st.sampled_from(["one\n", "two\n", "three\n"]).map(lambda body: f"---\ndescription: d\n---\n{body}")


class Writers(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.inner = InMemoryJournal("memory")
        self.journal = Interleaved(self.inner)
        self.port = Memory(self.journal, scope="agent")  # type: ignore[arg-type]
        self.chat = Session.create(InMemoryJournal("chat"))
        self.scheduler = ReflectionScheduler(self.journal, [self.chat.journal], step_threshold=1)  # type: ignore[arg-type]
        self.model: dict[str, str] = {}
        self.seen: dict[str, dict[str, str]] = {writer: {} for writer in WRITERS}

    def _expected(self, writer: str, note: str) -> str | None:
        text = self.seen[writer].get(note)
        return None if text is None else content_digest(text)

    def _holds(self, writer: str, note: str) -> bool:
        return self.model.get(note) == self.seen[writer].get(note)

    @rule(writer=st.sampled_from(WRITERS))
    def snapshot(self, writer: str) -> None:
        self.seen[writer] = dict(self.model)

    @rule(note=st.sampled_from(NOTES), text=texts)
    def another_process_writes(self, note: str, text: str) -> None:
        raw_write(self.inner, note, text)
        self.model[note] = text

    @rule(note=st.sampled_from(NOTES), text=texts, inside=st.sampled_from(NOTES))
    def port_writes(self, note: str, text: str, inside: str) -> None:
        """A supersede (or an exclusive create) from the port's snapshot; another process writes
        `inside` at the port's append when it is another note (rebased over)."""
        self.journal.calls, self.journal.log, self.journal.ran_at = 0, [], None
        if inside != note:
            self.journal.at = 1  # the port reads, then appends: the other write lands in between
            self.journal.competitor = lambda: raw_write(self.inner, inside, "---\ndescription: d\n---\nx\n")
        expected = self._expected("port", note)
        if expected is None:
            result = self.port.create(note, text, exclusive=True)
        else:
            result = self.port.supersede(note, text, expected_digest=expected)
        if self.journal.ran_at is not None:
            assert self.journal.log[self.journal.ran_at] == "append"
            self.model[inside] = "---\ndescription: d\n---\nx\n"
        self.journal.competitor = None
        self._settle("port", note, text, result.ok, result.error.code if result.error else None)

    @rule(note=st.sampled_from(NOTES), text=texts)
    def sync_imports(self, note: str, text: str) -> None:
        result = self.port.write_changes(
            writes={note: text},
            call_id=f"git-{self.inner.head().seq}",
            command="import_git",
            expected={note: self._expected("sync", note)},
        )
        code = result.error.code if result.error else None
        if code == "INVALID_ARGUMENT" and self.model.get(note) == text:
            return  # the change leaves the note as it is: nothing to write (model unchanged)
        self._settle("sync", note, text, result.ok, code)

    @rule(note=st.sampled_from(NOTES), text=texts, meanwhile=st.none() | st.sampled_from(NOTES))
    def reflection_merges(self, note: str, text: str, meanwhile: str | None) -> None:
        self.chat.user("news")
        self.chat.assistant("noted")
        self.scheduler.poll()
        run = self.scheduler.start()
        assert run is not None
        branch = ReflectionBranch.begin(self.scheduler, run, self.port)
        self.seen["reflection"] = dict(self.model)
        branch.memory.execute({"command": "create", "path": note, "text": text})
        if meanwhile is not None:  # the agent writes while the run works on its branch
            raw_write(self.inner, meanwhile, "---\ndescription: d\n---\nagent\n")
            self.model[meanwhile] = "---\ndescription: d\n---\nagent\n"
        outcome = branch.complete().outcome
        if self.seen["reflection"].get(note) == text:
            assert outcome == "no_changes" if meanwhile != note else outcome in ("no_changes", "failed")
            return
        if self._holds("reflection", note):
            assert outcome == "merged", f"{note} was not changed by anyone else, yet {outcome}"
            self.model[note] = text
        else:
            assert outcome == "failed", "the merge overwrote a note the agent wrote after the run began"

    def _settle(self, writer: str, note: str, text: str, ok: bool, code: str | None) -> None:
        if self._holds(writer, note):
            assert ok, f"{writer}: {note} held what it checked, yet {code}"
            self.model[note] = text
        else:
            assert not ok, f"{writer} overwrote a newer {note}"
            assert code in ("CONFLICT", "ALREADY_EXISTS")

    @invariant()
    def the_journal_holds_the_model(self) -> None:
        files = Memory(self.inner, scope="agent").state().files
        assert {path: file.text for path, file in files.items()} == self.model


TestWriters = Writers.TestCase
TestWriters.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)
