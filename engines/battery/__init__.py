"""The battery ``groupcheck check`` runs on every assignor of a target (`runner`): its engines
``codec`` and ``vectors`` (`golden`), ``prove`` and ``scenario`` (`prove`), ``fuzz``
(`fuzz`), ``scenarios`` (`scenarios`) and ``scale`` (`scale`), the balance contracts they
watch (`contract`), what a release does not implement (`profile_gaps`), the results
(`results`) and what ``check`` prints (`check_report`); and ``groupcheck prove`` and
``groupcheck fuzz`` on one assignor alone (`prove_one`, `fuzz_one`)."""
