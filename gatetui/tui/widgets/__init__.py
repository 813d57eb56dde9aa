"""The main screen's panels, each rendering a piece of the supervisor's state."""
