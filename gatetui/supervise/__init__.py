"""The supervisor, by job: branches watched, runs queued and gated, submits
and their cap, review records; `supervisor.Supervisor` puts them together
for the TUI, `gatetui serve` and the submit server. No Textual here.

    events   what consumers are told (and the fan-out that tells them)
    states   a run's states and the moves between them
    runs     what is known of branches and runs, folded from gate events
    scope    what every job shares: the repo, base, store, branches
    queue    launching runs, at most `parallel` at once; cancelling them
    gating   one run, from its request to its record
    submits  submitted commits, the cap, escalation
    reviews  review decisions, both versions of a file, stored logs
    watching the start-up scan and the branches' moves
"""
