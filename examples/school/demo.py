"""The school example, end to end: generate Python from the STL, implement a class, and run two
components' cycles by hand (the kernel that schedules them arrives with ``sengen run``).

    python examples/school/demo.py

The office component owns a classroom; the headteacher component watches it through a local
proxy, enrols pupils with asynchronous calls and reacts to the classroom's events.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path
from typing import Any

import sengen
from sengen import runtime

HERE = Path(__file__).resolve().parent


def generate(folder: Path) -> Any:
    """Build the STL into the root package ``school_gen`` below ``folder`` and import it."""
    result = sengen.generate([HERE / "stl"], output=folder / "school_gen")
    if not result.ok:
        sys.exit("\n".join(d.format() for d in result.diagnostics))
    sys.path.insert(0, str(folder))
    return importlib.import_module("school_gen.school")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        school = generate(Path(folder))

        class ClassroomImpl(school.ClassroomBase):
            def enrol_impl(self, pupil: str) -> bool:
                if pupil in self.get_next_pupils() or len(self.get_next_pupils()) >= 40:
                    return False
                self.set_next_pupils((*self.get_next_pupils(), pupil))
                self.events.enrolled.emit(pupil)
                return True

        office, head = runtime.Context("office"), runtime.Context("head")
        room = ClassroomImpl.from_config("room12", {"room": 12, "teacher": "Ms Lee"})
        room._bind(office, "local.school", 0)
        view = school.ClassroomLocalProxy(room, head)
        view.on_pupils_changed(lambda pupils: print(f"  head sees pupils {list(pupils)}"))
        view.events.enrolled.connect(lambda pupil: print(f"  head hears: {pupil} enrolled"))
        answers: list[tuple[str, bool]] = []

        for cycle, pupil in enumerate(["Ada", "Alan", "Ada", None, None]):
            time = cycle * 100_000_000  # 10 Hz
            print(f"cycle {cycle} at {runtime.Duration(time)}")
            for context in (office, head):
                context.time = time
            with head.active():
                head.drain()
                if pupil is not None:
                    view.enrol(pupil, on_result=lambda c, p=pupil: answers.append((p, c.result())))
                head.commit(time)
            with office.active():
                office.drain()
                office.commit(time)
        print(f"answers: {answers}")
        print(f"room {view.room} taught by {view.teacher}: {list(view.pupils)}")


if __name__ == "__main__":
    main()
