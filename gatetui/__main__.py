from gatetui.cli.main import entry

entry()
