"""One check's output lines, drawn straight from the run's own buffer.

Textual's `Log` keeps a copy of every line written to it: showing a check
meant copying up to `LOG_LINES` lines out of the run's buffer and escaping
each (on every switch between checks, and a table rebuilt under the cursor
switched twice), and each write started a thread to measure the new
lines' widths and, once the log was full, shifted its list and re-keyed
its render cache. While a check streamed 100,000 lines that work held the
event loop long enough for a key press to wait a frame or more.

This widget holds no lines: it reads the `LogBuffer` the run already keeps
and draws only the rows on screen, each made inert as it is drawn. Showing
another check is a pointer move; new lines cost the measure of their
width, once per buffer (`Widths`), and a redraw of what is visible.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections.abc import Sequence

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

from gatetui.inert import inert
from gatetui.supervise.runs import LogBuffer

_PLAIN = re.compile(r"[\n\x20-\x5b\x5d-\x7e]*")  # what `shown` leaves as it is: no tab, no backslash


def shown(line: str) -> str:
    """A line as drawn: head's text inert, tabs as the spaces they take."""
    return inert(line).expandtabs()


def widest(lines: list[str]) -> int:
    """The most cells any of `lines` takes, drawn. Lines of printable ASCII
    with no backslash are drawn as they are, a cell a character: measured
    by their length, a thousand at once (drawing each inert to measure it
    took milliseconds a redraw while a check streamed)."""
    if not lines:
        return 0
    if _PLAIN.fullmatch("\n".join(lines)):
        return max(map(len, lines))
    return max(cell_len(shown(line)) for line in lines)


class Widths:
    """The widest line drawn of each buffer, measured once per line as lines
    arrive (a buffer shown again measures only what came since). A line
    that has been dropped still counts: a little spare scroll, never a
    line cut short."""

    def __init__(self) -> None:
        self._seen: weakref.WeakKeyDictionary[LogBuffer, tuple[int, int]] = weakref.WeakKeyDictionary()

    def of(self, buffer: LogBuffer) -> int:
        measured, width = self._seen.get(buffer, (0, 0))
        new = min(buffer.total - measured, len(buffer.lines))
        if new > 0:
            width = max(width, widest(list(itertools.islice(reversed(buffer.lines), new))))
        self._seen[buffer] = (buffer.total, width)
        return width


class LogLines(ScrollView, can_focus=True):
    """The lines of one `LogBuffer`, following its end while they stream
    (unless the person scrolled up)."""

    def __init__(self, **kwargs: str) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.buffer: LogBuffer | None = None
        self.widths = Widths()
        self._strips: LRUCache[int, Strip] = LRUCache(1024)  # by line number since the check began
        self._style = Style()

    @property
    def lines(self) -> Sequence[str]:
        """The lines kept (as head wrote them; drawn inert)."""
        return self.buffer.lines if self.buffer is not None else ()

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def show(self, buffer: LogBuffer | None) -> None:
        """Draw `buffer` from its end (another buffer), or the lines it
        gained since the last call (the same one)."""
        follow = self.is_vertical_scroll_end and not self.is_vertical_scrollbar_grabbed
        if buffer is not self.buffer:
            self.buffer, follow = buffer, True
            self._strips.clear()
        width = self.widths.of(buffer) if buffer is not None else 0
        self._extend(Size(width, self.line_count))
        if follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh()

    def _extend(self, size: Size) -> None:
        """The lines' extent changed. With both scrollbars always shown
        (`overflow: scroll`) nothing on screen moves but their thumbs: they
        are set here, and the screen is not laid out again (a layout of the
        whole screen on each switch between checks cost more than the log's
        drawing). Any other overflow: the extent, and the layout it takes."""
        styles = self.styles
        if size == self.virtual_size:
            return
        if styles.overflow_x != "scroll" or styles.overflow_y != "scroll" or not self.container_size:
            self.virtual_size = size
            return
        self.set_reactive(LogLines.virtual_size, size)
        width, height = self.container_size
        for bar, extent, window in (
            (self.vertical_scrollbar, size.height, height - self.scrollbar_size_horizontal),
            (self.horizontal_scrollbar, size.width, width - self.scrollbar_size_vertical),
        ):
            bar.window_virtual_size, bar.window_size = extent, window
        self.scroll_x, self.scroll_y = self.validate_scroll_x(self.scroll_x), self.validate_scroll_y(self.scroll_y)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def render_lines(self, crop: Region) -> list[Strip]:
        """The widget's style read once per frame, not once per row (it walks the DOM)."""
        self._style = self.rich_style
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index, width = scroll_y + y, self.size.width
        if self.buffer is None or index >= len(self.buffer.lines):
            return Strip.blank(width, self._style)
        selection = self.text_selection
        if selection is not None:  # drawn afresh while the mouse selects: never kept
            strip = self._strip(self.buffer.lines[index], selection.get_span(index))
        else:
            strip = self._kept(self.buffer, index)
        return strip.crop_extend(scroll_x, scroll_x + width, self._style).apply_offsets(scroll_x, index)

    def _kept(self, buffer: LogBuffer, index: int) -> Strip:
        """Line `index` of those kept, drawn once: keyed by its number since
        the check began, which stays when older lines are dropped."""
        number = buffer.dropped + index
        strip = self._strips.get(number)
        if strip is None:
            strip = self._strips[number] = self._strip(buffer.lines[index])
        return strip

    def _strip(self, line: str, selected: tuple[int, int] | None = None) -> Strip:
        """One line whole (cropped to the view by the caller), as Textual's Log draws it."""
        text = shown(line)
        content = Text(text, no_wrap=True)
        content.stylize(self._style)
        if selected is not None:
            start, end = selected
            style = self.screen.get_component_rich_style("screen--selection")
            content.stylize(style, start, None if end == -1 else end)
        return Strip(content.render(self.app.console), cell_len(text))

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text selected with the mouse, as drawn."""
        return selection.extract("\n".join(shown(line) for line in self.lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()
