ch = Channel[Tile](depth=2)   # Double-buffered channel
event = Channel(depth=0)      # Event (rendezvous)
