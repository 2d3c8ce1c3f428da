"""What agents changed: the diff of a work tree since a baseline, and the change inside an approval."""
