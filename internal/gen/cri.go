package gen

// appendCRI appends one line in the CRI logging format of containerd and
// CRI-O: "<RFC 3339 time> <stream> <P|F> <text>". About one message in 30
// is split over two or three lines, all but the last tagged P (partial), as
// the runtime does for long lines.
func (g *Generator) appendCRI(dst []byte) []byte {
	r := g.rng
	if g.next == len(g.pending) {
		g.pending, g.next = g.pending[:0], 0
		g.pendingStream = "stdout"
		if r.IntN(10) == 0 {
			g.pendingStream = "stderr"
		}
		g.msg = g.appendFlat(g.msg[:0])
		if r.IntN(30) == 0 {
			parts := 2 + r.IntN(2)
			cut := len(g.msg) / parts
			for i := range parts - 1 {
				g.pending = append(g.pending, g.msg[i*cut:(i+1)*cut])
			}
			g.pending = append(g.pending, g.msg[(parts-1)*cut:])
		} else {
			g.pending = append(g.pending, g.msg)
		}
	}
	part := g.pending[g.next]
	g.next++
	tag := " F "
	if g.next < len(g.pending) {
		tag = " P "
	}
	dst = appendTime(dst, g.now, 9)
	dst = append(dst, ' ')
	dst = append(dst, g.pendingStream...)
	dst = append(dst, tag...)
	dst = append(dst, part...)
	return append(dst, '\n')
}
