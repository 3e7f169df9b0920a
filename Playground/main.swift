import Ripple

print("ripple-playground \(Ripple.version)")
print("usage: ripple-playground [list | demo NAME | run FILE | check FILE] [--marbles] [--times]")
