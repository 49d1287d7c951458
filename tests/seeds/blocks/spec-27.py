# Spatial mapping: workload → tile grid (defines the Mesh environment)
schedule.spatial_map(grid=(4, 4))  # 4x4 tile array
