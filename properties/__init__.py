"""Invariants of the classic protocol: one Python predicate each (and, with z3, an encoding)."""
