"""import-linter contract types of groupcheck's own (``tox -e lint``).

``stdlib_only``: the source modules and everything under them import nothing but the
standard library and the root package itself — ``impl/`` is embedded by users with nothing
installed beside it. import-linter's ``forbidden`` contract names the packages a floor may
not import; this one names the only ones it may, so a package nobody thought to list is
caught too. Needs ``include_external_packages = true``.
"""

from __future__ import annotations

import sys

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck

__all__ = ["StandardLibraryOnlyContract"]


class StandardLibraryOnlyContract(Contract):
    """No import of a package outside the standard library (see the module docstring)."""

    type_name = "stdlib_only"

    source_modules = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        found: list[tuple[str, str]] = []
        for source in self.source_modules:  # type: ignore[attr-defined]
            root = source.name.split(".")[0]
            for module in sorted({source.name} | graph.find_descendants(source.name)):
                for imported in sorted(graph.find_modules_directly_imported_by(module)):
                    top = imported.split(".")[0]
                    if top != root and top not in sys.stdlib_module_names:
                        found.append((module, imported))
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for module, imported in check.metadata["found"]:
            output.print_error(f"{module} imports {imported}, which is not in the standard "
                               "library")
            output.new_line()
