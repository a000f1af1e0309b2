"""The repository's stacks as a set: discovery (projects, stack files, StackReference dependencies), the stacks a
git diff can affect, and deterministic sharding for CI matrices. Nothing here runs a program."""
