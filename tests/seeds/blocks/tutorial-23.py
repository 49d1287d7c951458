from pto_wsp import Pass, Workload

class MyOptimizationPass(Pass):
    def run(self, workload: Workload) -> Workload:
        # Transform workload
        return transformed_workload

pm.add(MyOptimizationPass())
