@workload
def tiled_matmul():
    for bm in P(tile_m):
        for bn in P(tile_n):
            for bk in P(tile_k):
                matmul_tile[bm, bn, bk](
                    a=A[bm][bk],
                    b=B[bk][bn],
                    c=C[bm][bn]
                )
