@workload
def pipeline(tiles):
    ch = Channel[Tile](depth=2)

    with P.pipe():                          # Pipeline scope
        for i in P.seq(tiles):              # Producer
            send(ch, load[i](data))

        with consume(ch) as tile:           # Consumer (replaces recv())
            compute(tile)
