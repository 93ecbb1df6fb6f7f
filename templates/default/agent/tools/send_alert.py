"""A tool with a side effect: eve asks a person before every call (`needs_approval=True`)."""

from eve_runtime import tool


@tool(needs_approval=True)
def send_alert(city: str, message: str) -> dict[str, str | bool]:
    """Send a weather alert to the people subscribed to a city.

    Args:
        city: The city whose subscribers get the alert.
        message: The alert, one short sentence.
    """
    # A real tool would send messages here. The turn parks on `input.requested` until a person
    # approves or denies, and the call runs exactly once after an approval, even across restarts.
    return {"city": city, "sent": True, "message": message}
