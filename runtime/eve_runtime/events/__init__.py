"""The stream's events: every type named once, their wire shapes, and conversions between shapes."""
