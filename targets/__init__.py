"""Adapters that make anything checkable: the builtin impl, mutants, user assignors, peers."""
