/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Priority is how urgent an order is.
// +kubebuilder:validation:Enum=Low;Normal;High;"Very-High"
type Priority string

// Item is one line of an order.
// +kubebuilder:validation:XValidation:rule="self.quantity <= 100 || self.bulk",message="more than 100 needs bulk"
type Item struct {
	// sku identifies the product.
	// +kubebuilder:validation:Pattern=`^[A-Z]{3}-[0-9]{4}$`
	// +required
	SKU string `json:"sku"`

	// quantity is how many.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	// +optional
	Quantity int32 `json:"quantity,omitempty"`

	// bulk allows large quantities.
	// +optional
	Bulk bool `json:"bulk,omitempty"`

	// price per unit, a quantity.
	// +optional
	Price *resource.Quantity `json:"price,omitempty"`

	// tags are free labels.
	// +listType=set
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MinLength=1
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// Address is where to deliver.
// +structType=atomic
type Address struct {
	// street and number
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	Street string `json:"street"`
	// city
	City string `json:"city"`
	// zip code
	// +optional
	Zip *string `json:"zip,omitempty"`
	// location, as latitude and longitude
	// +optional
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=2
	Location []int64 `json:"location,omitempty"`
}

// Delivery says how the order travels.
type Delivery struct {
	// address to deliver to
	Address Address `json:"address"`
	// window during which to deliver, e.g. "2h"
	// +optional
	Window *metav1.Duration `json:"window,omitempty"`
	// contact is an email address.
	// +kubebuilder:validation:Format=email
	// +optional
	Contact string `json:"contact,omitempty"`
	// port to call, a number or a name
	// +optional
	Port *intstr.IntOrString `json:"port,omitempty"`
}

// EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!
// NOTE: json tags are required.  Any new fields you add must have json tags for the fields to be serialized.

// OrderSpec defines the desired state of Order
type OrderSpec struct {
	// INSERT ADDITIONAL SPEC FIELDS - desired state of cluster
	// Important: Run "make" to regenerate code after modifying this file
	// The following markers will use OpenAPI v3 schema to validate the value
	// More info: https://book.kubebuilder.io/reference/markers/crd-validation.html

	// items of the order, at least one.
	// +listType=map
	// +listMapKey=sku
	// +kubebuilder:validation:MinItems=1
	// +required
	Items []Item `json:"items"`

	// priority of the order.
	// +kubebuilder:default=Normal
	// +optional
	Priority Priority `json:"priority,omitempty"`

	// labels to attach, at most 5.
	// +kubebuilder:validation:MaxProperties=5
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// deadline by which the order must be delivered.
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`

	// delivery details; a nested struct.
	// +optional
	Delivery *Delivery `json:"delivery,omitempty"`

	// discount in percent, a multiple of 5.
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	// +kubebuilder:validation:MultipleOf=5
	// +optional
	Discount *int64 `json:"discount,omitempty"`

	// weights of the items by SKU, in kilograms.
	// +optional
	Weights map[string]resource.Quantity `json:"weights,omitempty"`

	// notes, free text; nullable.
	// +nullable
	// +optional
	Notes *string `json:"notes,omitempty"`

	// retries is an untyped integer.
	// +optional
	Retries int `json:"retries,omitempty"`

	// ratio is a float.
	// +kubebuilder:validation:Type=number
	// +optional
	Ratio string `json:"ratio,omitempty"`

	// extra holds anything.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	Extra *apiextensionsv1.JSON `json:"extra,omitempty"`

	// template is an embedded object.
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *runtime.RawExtension `json:"template,omitempty"`

	// secretRef names a Secret in the order's namespace.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`

	// code is immutable once set.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="code is immutable",reason=FieldValueForbidden
	// +kubebuilder:validation:XValidation:rule="self.size() > 0",messageExpression="'code must not be empty, got ' + self"
	// +optional
	Code string `json:"code,omitempty"`

	// matrix is a list of lists.
	// +optional
	Matrix [][]int32 `json:"matrix,omitempty"`

	// replicas for the scale subresource.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
}

// OrderStatus defines the observed state of Order.
type OrderStatus struct {
	// INSERT ADDITIONAL STATUS FIELD - define observed state of cluster
	// Important: Run "make" to regenerate code after modifying this file

	// For Kubernetes API conventions, see:
	// https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#typical-status-properties

	// conditions represent the current state of the Order resource.
	// Each condition has a unique type and reflects the status of a specific aspect of the resource.
	//
	// Standard condition types include:
	// - "Available": the resource is fully functional
	// - "Progressing": the resource is being created or updated
	// - "Degraded": the resource failed to reach or maintain its desired state
	//
	// The status of each condition is one of True, False, or Unknown.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// total price of the order.
	// +optional
	Total *resource.Quantity `json:"total,omitempty"`

	// shippedAt is when the order left.
	// +optional
	ShippedAt *metav1.Time `json:"shippedAt,omitempty"`

	// observedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// replicas counted for the scale subresource.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// selector for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=ord;ords,categories=shop
// +kubebuilder:printcolumn:name="Priority",type=string,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Total",type=string,JSONPath=`.status.total`,description="total price",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="name too long"

// Order is the Schema for the orders API
type Order struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of Order
	// +required
	Spec OrderSpec `json:"spec"`

	// status defines the observed state of Order
	// +optional
	Status OrderStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// OrderList contains a list of Order
type OrderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Order `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Order{}, &OrderList{})
		return nil
	})
}
