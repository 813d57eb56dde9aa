"""The demo's scenario notice: what a sample's agent did, shown in the run
pane beside its verdict, once the verdict is there.

It used to be a toast raised as the branch moved: the room read the story
long before the verdict, and two or three toasts at once stacked over the
Digests and Credits panes. Beside the verdict it says what to look for, and
whether the gate said what the scenario expects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.widgets import Static

from gatetui.inert import inert
from gatetui.supervise.run_states import RunState
from gatetui.supervise.runs import Run


@dataclass
class Notices:
    """Per branch: its scenario's story and the verdict the scenario expects."""

    stories: dict[str, str] = field(default_factory=dict)
    expects: dict[str, str] = field(default_factory=dict)

    def text(self, branch: str | None, run: Run | None) -> str:
        """The notice beside `run`'s verdict; empty before the verdict, and
        for a branch with no story (a repo that is not the workshop)."""
        story = self.stories.get(branch or "", "")
        if not story or run is None or not RunState(run.status).judged:
            return ""
        expects = self.expects.get(branch or "", "")
        if not expects:
            return f"scenario: {story}"
        said = "as the gate said" if expects == run.status else f"the gate said {run.status}"
        return f"scenario (expects {expects}, {said}): {story}"


class ScenarioNotice(Static):
    """Shown only while it has something to say."""

    def show(self, text: str) -> None:
        self.display = bool(text)
        self.update(inert(text))  # a branch name and a story are head's text, never markup
