"""The bug zoo: ``mutant:`` targets, each groupcheck's implementation with one rule undone
the way a real client once shipped it, and the entry that says which engine catches it."""
