print("standups-bench: see the next commit")
