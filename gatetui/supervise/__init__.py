"""The supervisor's records: branches and runs (`runs`), a run's states and
the moves between them (`states`). No Textual here."""
