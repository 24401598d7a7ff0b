"""Result files: the schema (run header, cell result), loading with validation, merging."""
