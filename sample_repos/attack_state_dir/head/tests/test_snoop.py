"""Looks for the gate's state directory and tries to read and change it."""
import os

ROOTS = ("/var/tmp", "/root", "/home", "/tmp", "/run")


def test_state_directory_is_out_of_reach(capsys):
    with capsys.disabled():
        snoop()
        print("snoop finished")


def snoop():
    for top in ROOTS:
        for folder, dirs, names in os.walk(top):
            if folder.count("/") > 5:
                dirs[:] = []
            if "gatetui" not in folder and not folder.startswith("/tmp/"):
                continue  # the gate's folders by name; anything in the run's own /tmp
            for name in names:
                try:
                    with open(os.path.join(folder, name), "rb") as handle:
                        print("LEAK", folder, name, handle.read(200))
                except OSError as err:
                    print("refused", folder, name, err.errno)
            try:
                with open(os.path.join(folder, "planted-by-agent"), "w") as handle:
                    handle.write("pass")
                print("WROTE", folder)
            except OSError as err:
                print("refused write", folder, err.errno)
