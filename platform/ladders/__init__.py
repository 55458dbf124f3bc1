"""Ladders: bots rated by Elo from the matches they play; ``ratings`` holds the arithmetic."""
