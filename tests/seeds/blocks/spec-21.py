loader = process("loader").produces(ch).body(...)
computer = process("computer").consumes(ch).produces(out).body(...)
storer = process("storer").consumes(out).body(...)

pipeline = connect([loader, computer, storer], [ch, out])
pipeline.start()
pipeline.join()
