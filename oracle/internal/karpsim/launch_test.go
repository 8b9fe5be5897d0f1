package karpsim

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The DaemonSet controller binds a DaemonSet's pod to a node whose PreferNoSchedule taint
// it does not tolerate, and not to one whose NoSchedule taint it does not tolerate.
func TestDaemonPodsForLeavesPreferNoScheduleAside(t *testing.T) {
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "x"}},
		}}},
	}
	for _, c := range []struct {
		effect corev1.TaintEffect
		pods   int
	}{
		{corev1.TaintEffectPreferNoSchedule, 1},
		{corev1.TaintEffectNoSchedule, 0},
		{corev1.TaintEffectNoExecute, 0},
	} {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n"},
			Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "soft", Value: "true", Effect: c.effect}}},
		}
		if got := len(daemonPodsFor(context.Background(), node, []*appsv1.DaemonSet{ds})); got != c.pods {
			t.Errorf("taint %s: %d DaemonSet pods bound, want %d", c.effect, got, c.pods)
		}
	}
}
