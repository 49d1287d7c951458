w = attention()
tasks = w.enumerate()

print(f"Total tasks: {len(tasks)}")
for task in tasks[:5]:
    print(f"  Kernel: {task.kernel}, Batch: {task.get('b')}, Head: {task.get('h')}")
