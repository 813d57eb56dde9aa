from gatetui.cli import entry

entry()
