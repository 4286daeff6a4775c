"""Fault points and their stories (the battery's ``faults`` engine plays them)."""
