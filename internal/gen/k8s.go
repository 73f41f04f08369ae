package gen

import (
	"math/rand/v2"
	"strconv"
)

// A pod is the Kubernetes metadata that the kubernetes filter of a log
// agent adds to every record of a container.
type pod struct {
	name, namespace, id, host, container, image string
	labels, annotations                         [][2]string
}

var (
	namespaces = []string{"default", "kube-system", "payments", "shop", "monitoring", "ingress-nginx"}
	apps       = []string{"api", "web", "worker", "redis", "postgres", "nginx", "fluent-bit", "checkout"}
	teams      = []string{"core", "growth", "platform", "data"}
)

func makePods(r *rand.Rand, n int) []pod {
	pods := make([]pod, n)
	for i := range pods {
		app := pick(r, apps)
		hash := string(appendHex(nil, r, 10))
		suffix := string(appendHex(nil, r, 5))
		p := &pods[i]
		p.name = app + "-" + hash + "-" + suffix
		p.namespace = pick(r, namespaces)
		id := appendHex(nil, r, 32)
		p.id = string(id[0:8]) + "-" + string(id[8:12]) + "-" + string(id[12:16]) + "-" + string(id[16:20]) + "-" + string(id[20:32])
		p.host = "node-" + strconv.Itoa(r.IntN(20)) + ".cluster.local"
		p.container = app
		p.image = "registry.example.com/" + app + ":1." + strconv.Itoa(r.IntN(30)) + "." + strconv.Itoa(r.IntN(10))
		p.labels = [][2]string{
			{"app.kubernetes.io/name", app},
			{"app.kubernetes.io/instance", app + "-" + p.namespace},
			{"app.kubernetes.io/version", "1." + strconv.Itoa(r.IntN(30))},
			{"pod-template-hash", hash},
			{"team", pick(r, teams)},
		}
		p.annotations = [][2]string{
			{"kubectl.kubernetes.io/default-container", app},
			{"prometheus.io/scrape", strconv.FormatBool(r.IntN(2) == 0)},
			{"checksum/config", string(appendHex(nil, r, 64))},
		}
	}
	return pods
}

// appendK8s appends a record as the kubernetes filter leaves it: the
// container's line in log, its stream and time, and the pod's metadata.
func (g *Generator) appendK8s(dst []byte) []byte {
	r := g.rng
	p := &g.pods[r.IntN(len(g.pods))]
	stream := "stdout"
	if r.IntN(10) == 0 {
		stream = "stderr"
	}
	dst = append(dst, `{"time":"`...)
	dst = appendTime(dst, g.now, 9)
	dst = append(dst, `","stream":"`...)
	dst = append(dst, stream...)
	dst = append(dst, `","_p":"F","log":"`...)
	// The application's own line, a JSON text inside a JSON string.
	g.msg = g.appendFlat(g.msg[:0])
	dst = appendJSONText(dst, g.msg)
	dst = append(dst, `","kubernetes":{"pod_name":"`...)
	dst = append(dst, p.name...)
	dst = append(dst, `","namespace_name":"`...)
	dst = append(dst, p.namespace...)
	dst = append(dst, `","pod_id":"`...)
	dst = append(dst, p.id...)
	dst = append(dst, `","host":"`...)
	dst = append(dst, p.host...)
	dst = append(dst, `","container_name":"`...)
	dst = append(dst, p.container...)
	dst = append(dst, `","container_image":"`...)
	dst = append(dst, p.image...)
	dst = append(dst, `","labels":`...)
	dst = appendObject(dst, p.labels)
	dst = append(dst, `,"annotations":`...)
	dst = appendObject(dst, p.annotations)
	dst = append(dst, "}}"...)
	return dst
}

func appendObject(dst []byte, kv [][2]string) []byte {
	dst = append(dst, '{')
	for i, e := range kv {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, e[0]...)
		dst = append(dst, `":"`...)
		dst = append(dst, e[1]...)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}
