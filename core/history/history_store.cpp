// filled in by the history work
