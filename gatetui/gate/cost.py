"""What a gate run costs at Runtime's published rates.

The local fallback measures CPU time and peak memory of each command and
prices them as Runtime would, so a team can see what moving the gate to
microVMs would cost; every figure it produces says it is an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gatetui.backends.base import CommandResult

CPU_DOLLARS_PER_VCPU_HOUR = 0.025
MEMORY_DOLLARS_PER_GIB_HOUR = 0.0075
GIB = 2**30


@dataclass(frozen=True)
class Usage:
    """Measured use of one command or check."""

    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    gib_seconds: float = 0.0  # memory held, integrated over wall time

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.wall_seconds + other.wall_seconds,
            self.cpu_seconds + other.cpu_seconds,
            self.gib_seconds + other.gib_seconds,
        )

    @property
    def cpu_minutes(self) -> float:
        return self.cpu_seconds / 60

    @property
    def gib_minutes(self) -> float:
        return self.gib_seconds / 60

    @property
    def dollars(self) -> float:
        return (
            self.cpu_seconds / 3600 * CPU_DOLLARS_PER_VCPU_HOUR + self.gib_seconds / 3600 * MEMORY_DOLLARS_PER_GIB_HOUR
        )


def used_by(result: CommandResult) -> Usage:
    """What one command used, priced as usage_of says."""
    return usage_of(result.wall_seconds, result.cpu_seconds, result.peak_rss_bytes)


def usage_of(wall_seconds: float, cpu_seconds: float, peak_rss_bytes: int) -> Usage:
    """Price a command by its peak memory held for its whole wall time.

    Runtime bills memory while the sandbox runs, so peak-times-wall is the
    honest upper estimate for a command that had the sandbox to itself.
    """
    return Usage(wall_seconds, cpu_seconds, peak_rss_bytes / GIB * wall_seconds)


@dataclass(frozen=True)
class Cost:
    """Per check and in total; `measured` is False for estimates."""

    per_check: dict[str, Usage] = field(default_factory=dict)
    measured: bool = False
    account: dict[str, float] = field(default_factory=dict)  # dollars the backend's account reports
    saved: dict[str, Usage] = field(default_factory=dict)  # per check: work a kept dependency layer spared

    @property
    def total(self) -> Usage:
        total = Usage()
        for usage in self.per_check.values():
            total = total + usage
        return total

    @property
    def basis(self) -> str:
        return "measured by Runtime" if self.measured else "estimated at Runtime rates"

    def to_json(self) -> dict[str, object]:
        def row(u: Usage) -> dict[str, float]:
            return {
                "wall_seconds": round(u.wall_seconds, 3),
                "cpu_minutes": round(u.cpu_minutes, 4),
                "gib_minutes": round(u.gib_minutes, 4),
                "dollars": round(u.dollars, 6),
            }

        return {
            "basis": self.basis,
            "rates": {
                "cpu_dollars_per_vcpu_hour": CPU_DOLLARS_PER_VCPU_HOUR,
                "memory_dollars_per_gib_hour": MEMORY_DOLLARS_PER_GIB_HOUR,
            },
            "checks": {k: row(v) for k, v in self.per_check.items()},
            "total": row(self.total),
            **({"account": dict(self.account)} if self.account else {}),
            **({"saved": {k: row(v) for k, v in self.saved.items()}} if self.saved else {}),
        }
