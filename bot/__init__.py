"""The Slack adapter and the command line: everything that talks to people."""
