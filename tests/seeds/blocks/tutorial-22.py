from pto_wsp import PassManager, FlattenCombinePass, PrintPass

pm = PassManager()
pm.add(PrintPass("before"))
pm.add(FlattenCombinePass())
pm.add(PrintPass("after"))

transformed = pm.run(workload(), verbose=True)
