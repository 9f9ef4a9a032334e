# shellcheck shell=bash disable=SC2154 # $rbuilder and $kubebuilder: set by the scripts that source it
# The DemoMicroService operator as rbuilder writes it and as kubebuilder v4.16 writes it
# (`create api --plugins deploy-image/v1-alpha`), with the same image, port and user: sourced by
# bench/peer.sh and bench/scale.sh, which set $rbuilder and $kubebuilder to the binaries.

demo_image=stefanprodan/podinfo:6.7.1 demo_port=9898 demo_user=1001

# The spec of a DemoMicroService with one replica, for each operator's CRD (kubebuilder's
# deploy-image kind names its fields size and containerPort, and takes the image from the
# manager's environment, DEMOMICROSERVICE_IMAGE).
# shellcheck disable=SC2034 # used by the scripts that source this file
demo_spec_rust="{\"image\": \"$demo_image\", \"replicas\": 1, \"port\": $demo_port}"
# shellcheck disable=SC2034
demo_spec_go="{\"size\": 1, \"containerPort\": $demo_port}"

scaffold_rust() { # DIR: the folder's name is the project's name
  mkdir -p "$1" && cd "$1" &&
    "$rbuilder" init --domain my.domain &&
    "$rbuilder" create api --group devops --version v1 --kind DemoMicroService \
      --image "$demo_image" --image-container-port "$demo_port" --run-as-user "$demo_user"
}

scaffold_go() { # DIR: the folder's name is the project's name
  mkdir -p "$1" && cd "$1" &&
    "$kubebuilder" init --domain my.domain --repo my.domain/demo-microservice </dev/null &&
    "$kubebuilder" create api --group devops --version v1 --kind DemoMicroService \
      --plugins deploy-image/v1-alpha \
      --image "$demo_image" --image-container-port "$demo_port" --run-as-user "$demo_user" </dev/null
}

# fix_go_port_name PROJECT: kubebuilder v4.16's deploy-image controller names the container port
# after the kind, lower case: "demomicroservice", 16 characters, where a port name may have 15
# (IANA_SVC_NAME), so the API server refuses every Deployment it makes for this kind. The one
# edit made to its output for it to work at all: the name cut to 15 characters,
# "demomicroservic", the name rbuilder's controller gives that port. Prints "fixed" if it made
# the edit; nothing (and a note on stderr) once kubebuilder's output no longer has that line.
fix_go_port_name() {
  local controller=$1/internal/controller/demomicroservice_controller.go
  if perl -0 -ne 'exit(/ContainerPort: \w+\.Spec\.ContainerPort,\n\s*Name:\s*\w+ContainerName,/ ? 0 : 1)' "$controller"; then
    perl -0pi -e 's/(ContainerPort: \w+\.Spec\.ContainerPort,\n\s*Name:\s*\w+ContainerName)\b/$1\[:15\]/' "$controller"
    echo fixed
  else
    echo "kubebuilder's controller no longer names the port after the kind: left as it is" >&2
  fi
}
