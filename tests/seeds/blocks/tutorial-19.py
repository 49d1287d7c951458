import json

chrome_trace = program.trace.to_chrome_trace()
with open("trace.json", "w") as f:
    json.dump(chrome_trace, f)

# Open chrome://tracing and load trace.json
