package karpsim

import (
	"github.com/awslabs/operatorpkg/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/karplint/karplint/oracle/internal/awslabels"
)

// EC2NodeClass stands for the AWS provider's node class in the scheme, so Karpenter core's
// nodepoolutils.IsManaged sees NodePools whose nodeClassRef is
// karpenter.k8s.aws/EC2NodeClass as managed by the oracle's cloud provider. Its spec is not
// modelled: what the node class decides (types, zones, overhead) comes in karplint's
// instance-type export.
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            EC2NodeClassStatus `json:"status,omitempty"`
}

// EC2NodeClassStatus holds the node class's conditions.
type EC2NodeClassStatus struct {
	Conditions []status.Condition `json:"conditions,omitempty"`
}

// EC2NodeClassList is a list of EC2NodeClass.
type EC2NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EC2NodeClass `json:"items"`
}

// NodeClassGVK is the group, version and kind of EC2NodeClass.
var NodeClassGVK = schema.GroupVersionKind{Group: awslabels.Group, Version: "v1", Kind: "EC2NodeClass"}

func init() {
	gv := NodeClassGVK.GroupVersion()
	metav1.AddToGroupVersion(scheme.Scheme, gv)
	scheme.Scheme.AddKnownTypes(gv, &EC2NodeClass{}, &EC2NodeClassList{})
}

// StatusConditions implements status.Object.
func (in *EC2NodeClass) StatusConditions(opts ...status.ForOption) status.ConditionSet {
	return status.NewReadyConditions().For(in, opts...)
}

// GetConditions implements status.Object.
func (in *EC2NodeClass) GetConditions() []status.Condition { return in.Status.Conditions }

// SetConditions implements status.Object.
func (in *EC2NodeClass) SetConditions(c []status.Condition) { in.Status.Conditions = c }

// DeepCopyObject implements runtime.Object.
func (in *EC2NodeClass) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = append([]status.Condition(nil), in.Status.Conditions...)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (in *EC2NodeClassList) DeepCopyObject() runtime.Object {
	out := *in
	out.Items = make([]EC2NodeClass, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopyObject().(*EC2NodeClass)
	}
	return &out
}
