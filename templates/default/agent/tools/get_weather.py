"""A tool: the file name is the tool's name, the docstring its description, the signature its input."""


def get_weather(city: str) -> dict[str, str | int]:
    """Get the current weather for a city.

    Args:
        city: The city to look up, for example "Paris".
    """
    # A real tool would call a weather service here; this one answers offline so the app runs anywhere.
    return {"city": city, "condition": "Sunny", "temperatureF": 72}
