"""Pure logic, standard library only: statuses, the case model, comparison, verdicts, the observation protocol."""
