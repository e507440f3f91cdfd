"""Change events and the bus that carries them to listening streams."""
