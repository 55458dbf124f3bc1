"""The ``arena`` command line: play matches locally and benchmark the engine.

Sits on top of ``sandbox`` and ``engine``; nothing below imports it.
"""
