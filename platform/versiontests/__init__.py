"""Version tests: an owner's SPRT of one bot version against another, played unrated on the workers."""
