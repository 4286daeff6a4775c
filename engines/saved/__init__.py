"""Saved files played again and shrunk: state-machine replay files and request files
(`files`, `requests`) and the audit's stories (`stories`); the one reader of the files is
`model.saved_files`."""
