"""Tasks: subagents and tool tasks working in child sessions, and the relays between parent and child."""
