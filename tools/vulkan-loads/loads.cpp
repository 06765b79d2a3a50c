// How a Vulkan device's compiler treats operand fetches (README.md): runs one of
// make-shaders.py's compute shaders over two 64 MB buffers bound as storage
// buffers (bindings 0, 1) and the first also as uniform texel buffers (binding
// 2: R32_SFLOAT, 3: R32G32B32A32_SFLOAT), and prints the fastest of REPS
// submissions of one dispatch. A hand-run measurement, not part of the build:
//
//   g++ -O2 -o loads loads.cpp -lvulkan && ./loads SHADER.spv GROUPS REPS [STEPS]
#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>
#define CK(x)                                \
  do {                                       \
    VkResult r_ = (x);                       \
    if (r_) {                                \
      std::printf("%s failed %d\n", #x, r_); \
      std::exit(1);                          \
    }                                        \
  } while (0)
int main(int argc, char** argv) {
  const char* spv = argv[1];
  uint32_t groups = std::atoi(argv[2]), reps = std::atoi(argv[3]);
  VkApplicationInfo ai{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  ai.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &ai;
  VkInstance inst;
  CK(vkCreateInstance(&ici, nullptr, &inst));
  uint32_t n = 1;
  VkPhysicalDevice pd;
  vkEnumeratePhysicalDevices(inst, &n, &pd);
  float prio = 1;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueCount = 1;
  qi.pQueuePriorities = &prio;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qi;
  VkDevice dev;
  CK(vkCreateDevice(pd, &dci, nullptr, &dev));
  VkQueue q;
  vkGetDeviceQueue(dev, 0, 0, &q);
  const VkDeviceSize size = 64 << 20;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
             VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT;
  VkBuffer buf[2];
  VkDeviceMemory mem[2];
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  for (int i = 0; i < 2; ++i) {
    CK(vkCreateBuffer(dev, &bi, nullptr, &buf[i]));
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, buf[i], &mr);
    uint32_t t = 0;
    while (!(mr.memoryTypeBits & (1u << t)) ||
           !(mp.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
      ++t;
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = mr.size;
    mai.memoryTypeIndex = t;
    CK(vkAllocateMemory(dev, &mai, nullptr, &mem[i]));
    CK(vkBindBufferMemory(dev, buf[i], mem[i], 0));
    float* p;
    vkMapMemory(dev, mem[i], 0, size, 0, (void**)&p);
    for (size_t k = 0; k < size / 4; ++k) p[k] = float(k % 97) * 0.01f;
    vkUnmapMemory(dev, mem[i]);
  }
  VkBufferView views[2];
  VkFormat fmts[2] = {VK_FORMAT_R32_SFLOAT, VK_FORMAT_R32G32B32A32_SFLOAT};
  for (int i = 0; i < 2; ++i) {
    VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    vi.buffer = buf[0];
    vi.format = fmts[i];
    vi.offset = 0;
    vi.range = size;
    CK(vkCreateBufferView(dev, &vi, nullptr, &views[i]));
  }
  VkDescriptorSetLayoutBinding b[4] = {};
  for (int i = 0; i < 4; ++i) {
    b[i].binding = i;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    b[i].descriptorType = i < 2 ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
  }
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = 4;
  li.pBindings = b;
  VkDescriptorSetLayout dsl;
  CK(vkCreateDescriptorSetLayout(dev, &li, nullptr, &dsl));
  VkPushConstantRange pr{VK_SHADER_STAGE_COMPUTE_BIT, 0, 16};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &dsl;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &pr;
  VkPipelineLayout pl;
  CK(vkCreatePipelineLayout(dev, &pli, nullptr, &pl));
  VkDescriptorPoolSize ps[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2},
                                {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 2}};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 2;
  dpi.pPoolSizes = ps;
  VkDescriptorPool dp;
  CK(vkCreateDescriptorPool(dev, &dpi, nullptr, &dp));
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = dp;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &dsl;
  VkDescriptorSet ds;
  CK(vkAllocateDescriptorSets(dev, &dai, &ds));
  VkDescriptorBufferInfo dbi[2] = {{buf[0], 0, size}, {buf[1], 0, size}};
  VkWriteDescriptorSet w[4] = {};
  for (int i = 0; i < 4; ++i) {
    w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w[i].dstSet = ds;
    w[i].dstBinding = i;
    w[i].descriptorCount = 1;
    w[i].descriptorType = b[i].descriptorType;
    if (i < 2)
      w[i].pBufferInfo = &dbi[i];
    else
      w[i].pTexelBufferView = &views[i - 2];
  }
  vkUpdateDescriptorSets(dev, 4, w, 0, nullptr);
  std::ifstream f(spv, std::ios::binary);
  std::vector<char> code((std::istreambuf_iterator<char>(f)), {});
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = code.size();
  smi.pCode = (uint32_t*)code.data();
  VkShaderModule sm;
  CK(vkCreateShaderModule(dev, &smi, nullptr, &sm));
  VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpi.layout = pl;
  cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
               nullptr,
               0,
               VK_SHADER_STAGE_COMPUTE_BIT,
               sm,
               "main",
               nullptr};
  VkPipeline pipe;
  CK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, nullptr, &pipe));
  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  VkCommandPool cp;
  CK(vkCreateCommandPool(dev, &cpci, nullptr, &cp));
  VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = cp;
  cbai.commandBufferCount = 1;
  VkCommandBuffer cb;
  CK(vkAllocateCommandBuffers(dev, &cbai, &cb));
  VkCommandBufferBeginInfo cbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  CK(vkBeginCommandBuffer(cb, &cbi));
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &ds, 0, nullptr);
  uint32_t pc[4] = {uint32_t(argc > 4 ? std::atoi(argv[4]) : 64), 0, 0, 0};
  vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 16, pc);
  vkCmdDispatch(cb, groups, 1, 1);
  CK(vkEndCommandBuffer(cb));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  vkCreateFence(dev, &fci, nullptr, &fence);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  double best = 1e9;
  for (uint32_t r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    CK(vkQueueSubmit(q, 1, &si, fence));
    CK(vkWaitForFences(dev, 1, &fence, VK_TRUE, ~0ull));
    vkResetFences(dev, 1, &fence);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (t < best) best = t;
  }
  std::printf("%-28s %8.3f ms\n", spv, best * 1e3);
  return 0;
}
