"""Adapters that make anything checkable: the builtin impl, user assignors, peers."""
